"""What a test takes from the site configuration, with the defaults when a key is absent."""
import sys


def python_for(test):
    """The Python that runs the payload.

    A site's TensorFlow environment names it in its ``extras`` (``python``) or puts
    ``python3`` on PATH through its modules; ReFrame's builtin environment (no
    ``-C``) runs the suite with the Python that runs ReFrame, where README.md
    installs it.
    """
    environ = test.current_environ
    if environ.name == 'builtin':
        return sys.executable
    return environ.extras.get('python', 'python3')
