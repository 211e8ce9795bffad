"""Helpers of memory formation: prompt building and schema-constrained model calls."""
