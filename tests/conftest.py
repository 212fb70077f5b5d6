"""Test-wide setup: never touch the user's real cache directory."""

import os
import tempfile

os.environ.setdefault("JAXMIGRATE_CACHE_DIR", tempfile.mkdtemp(prefix="jaxmigrate-test-cache-"))
