"""The world's persistence: the SQLite document store and its transactions (`sqlite`), its
migrations, the demo world's seed and the compendium packs."""
