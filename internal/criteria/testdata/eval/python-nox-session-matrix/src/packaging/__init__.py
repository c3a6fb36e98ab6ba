__title__ = "packaging"
__version__ = "25.1.dev0"
