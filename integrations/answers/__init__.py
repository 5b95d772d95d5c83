"""What insurers answer, in our words: results (quotes, policies, documents), the error taxonomy
and its classification, the coverage vocabulary."""
