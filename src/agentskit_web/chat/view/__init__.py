"""chat/view"""
