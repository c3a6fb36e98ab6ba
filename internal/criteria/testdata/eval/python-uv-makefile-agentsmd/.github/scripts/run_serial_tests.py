import subprocess
import sys

sys.exit(subprocess.call(["uv", "run", "pytest", "-m", "serial"]))
