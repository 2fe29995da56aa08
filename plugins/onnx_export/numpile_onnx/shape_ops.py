"""shape_ops"""
ROWS = {}
UNSUPPORTED = {}
