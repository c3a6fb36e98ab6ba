"""Click is a simple Python module for composable command line interfaces."""

__version__ = "8.1.7"
