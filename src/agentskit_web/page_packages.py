"""The page's packages: what the runtime installs before the widget mounts, and what after.

The page package is installed at boot with every dependency its lock entry names.
markdown-it-py (with mdurl, its own dependency) is left out of that entry and installed
as soon as the widget is ready: nothing renders markdown before the first answer, and
unpacking it on the main thread cost about 50 ms of a warm boot. The build still
prefetches its files with the rest on a first boot and precaches them for offline use.
"""

from typing import Final

PAGE_PACKAGE: Final = "agentskit-web"
INSTALLED_AFTER_READY: Final = ("markdown-it-py",)
