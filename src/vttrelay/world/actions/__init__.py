"""The world's actions: one module per endpoint group, each handler marked with
`runtime.table.action`; the D&D 5e actions in `dnd5e_*` modules. `table.standard_table()`
builds the one `ActionTable` a world answers with (nothing is registered by importing a
module)."""
