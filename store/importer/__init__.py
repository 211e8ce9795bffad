"""Importing dialog history: the JSONL format (docs/import-format.md) and LoCoMo's JSON."""

from store.importer.model import ImportInputError
from store.importer.run import AfterConversation, detect_format, import_file

__all__ = ["AfterConversation", "ImportInputError", "detect_format", "import_file"]
