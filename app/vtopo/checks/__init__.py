"""Checks: a lab's expectations (reach, path, routes, domains, rates) judged against the deployed lab. No Qt."""
