"""JavaScript shipped as package data: `prelude.js`, the world API execute-js scripts see."""
