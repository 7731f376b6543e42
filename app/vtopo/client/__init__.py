"""The user's side of the agent: the one way the command line and the designer reach the host (agent.connect), the
verbs they ask for, and the terminal and console a user's session runs on. Runs as the user, never as root (except
for root's own commands)."""
