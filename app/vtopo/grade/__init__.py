"""Grading students' submissions of an assignment: each one deployed as the calling member through the agent, judged
by the assignment's checks, destroyed, and the results written as a table."""
