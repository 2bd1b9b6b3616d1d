"""Generators for the reference pages in docs/ (settings and schema); tests keep them current."""
