"""Formulae: LaTeX to symbol layout trees (SLT) and operator trees (OPT). Work in progress."""
