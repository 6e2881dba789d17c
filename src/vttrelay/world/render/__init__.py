"""Pictures the embedded world draws with Pillow: scenes and character sheets."""
