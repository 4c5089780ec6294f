"""A directory the suite writes files in, often shared (ssb-acceptance's ``--out``, the
dashboard's): checked before anything is written in it, so that no file is written through a
link that another user planted."""
import os
import stat


class OutDirError(Exception):
    """The directory is not safe to write in, or another run holds it."""


def own_dir(path, follow=False):
    """Make the directory ``path`` or check the one there: the files this command writes in
    it must not be links that another user planted (``--out`` is often shared). Refused: a
    symbolic link (unless ``follow``: ``--out`` itself), anything not a directory, and a
    directory every user may write to without the sticky bit."""
    os.makedirs(path, exist_ok=True)
    st = os.stat(path) if follow else os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise OutDirError(f'{path} is a symbolic link: refusing to follow it (remove it)')
    if not stat.S_ISDIR(st.st_mode):
        raise OutDirError(f'{path} is not a directory')
    if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
        raise OutDirError(f'{path} is writable by every user and has no sticky bit: anyone '
                          f'could plant links in it; chmod o-w (or +t) it first')
    return path
