"""Process plumbing: a session, its worker processes, and the client of the warm checker."""
