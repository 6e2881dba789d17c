"""The embedded D&D 5e world: documents, rules, actions, and its agent to a relay."""
