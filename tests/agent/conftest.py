"""The agent's tests use the members, the agent and the lab directory of tests/members.py."""
from members import agent, readable_dir, users  # noqa: F401  (fixtures)
