"""chat/memory"""
