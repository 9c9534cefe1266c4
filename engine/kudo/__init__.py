"""KUDO packages in kplan: Go text/template parsed and translated to Jinja2, and whole packages converted."""
