"""Correct: the tiny server with tasks (see _tiny_tasks.py)."""

from _tiny import main
from _tiny_tasks import TinyTasksServer

if __name__ == "__main__":
    main(TinyTasksServer())
