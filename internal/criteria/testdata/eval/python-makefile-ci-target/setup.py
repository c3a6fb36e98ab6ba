from setuptools import setup

setup(name="requests", packages=["requests"], extras_require={"socks": ["PySocks>=1.5.6, !=1.5.7"]})
