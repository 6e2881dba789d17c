"""Pure D&D 5e rules: plain functions over documents, no I/O."""
