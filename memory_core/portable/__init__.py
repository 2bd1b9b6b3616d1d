"""Memory that can move: the export format (:mod:`.format`), export, import (ours and mem0's)."""
