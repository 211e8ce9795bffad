"""Notes: who may write and pin them, and how the pinned ones reach the prompt."""
