"""YAML as the reference files need it: safe, a key given twice refused, errors in one line."""
import collections.abc

import yaml


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping: PyYAML keeps the last one,
    so a pasted entry would silently replace the reference above it."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, collections.abc.Hashable) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f'duplicate key {key!r} (first on line {seen[key]})',
                    key_node.start_mark)
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep)


def load(text):
    """The document in ``text``; ValueError saying where and what is wrong, in one line."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark
        raise ValueError(f'line {mark.line + 1}, column {mark.column + 1}: {err.problem}'
                         + (f' ({err.context})' if err.context else '')) from None
    except yaml.YAMLError as err:
        raise ValueError(' '.join(str(err).split())) from None
