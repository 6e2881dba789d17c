"""The execute-js sandbox (`sandbox`): scripts run in an embedded JavaScript engine in a child
process, with the world API of `js/prelude.js`."""
