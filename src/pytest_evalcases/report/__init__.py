"""Rendering results for people: terminal text, the eval gate summary, the HTML report."""
