"""`python -m tools.codegen`: rewrite the generated files from the route table."""

from tools.codegen import main

main()
