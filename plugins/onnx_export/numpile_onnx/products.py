"""products"""
ROWS = {}
UNSUPPORTED = {}
