from setuptools import setup
setup(name="pytox")
