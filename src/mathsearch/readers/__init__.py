"""Readers: stream collection, topic, formula, qrels and run files into typed records."""
