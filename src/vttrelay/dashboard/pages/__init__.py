"""The dashboard's pages, one module per page (DESIGN §11); each has `setup(app, dash)`."""
