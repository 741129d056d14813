"""chat/ask"""
