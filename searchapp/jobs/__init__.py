"""Background work: the queue (jobs table), the tasks, and the worker process."""
