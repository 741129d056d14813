"""PLACEHOLDER: being written; replace this whole file."""

from typing import Any

KnowledgeArtifact: Any = None
parse_knowledge_artifact: Any = None
