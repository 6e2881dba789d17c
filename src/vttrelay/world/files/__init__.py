"""The embedded world's file store: path rules (`paths`) and the store itself (`store`)."""
