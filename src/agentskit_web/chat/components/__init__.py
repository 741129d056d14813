"""chat/components"""
