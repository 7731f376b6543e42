"""vtopo's build: everything is in setup.cfg but the packages, which come from two folders (vtopo from app/, its
built-in kinds from plugins/), and setup.cfg's `find:` looks in one."""
from setuptools import find_packages, setup

setup(packages=find_packages("app") + find_packages("plugins"))
