"""ssb-acceptance's notification: the summary POSTed as JSON to an http(s) URL.

The URL is checked when the options are read, before the run: a bad one is a usage error,
never a traceback after a passed run that cron would read as drift. Sending is best
effort: a failure is one warning line and never changes the exit status. Redirects are
not followed: a redirected POST arrives as a GET without the summary, and must not take
the Authorization header to another host.
"""
import http.client
import json
import urllib.error
import urllib.parse
import urllib.request

SCHEMES = ('http', 'https')


def check_url(url):
    """The URL if it is an http(s) URL with a host; else ValueError (argparse's type)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() not in SCHEMES or not parts.hostname:
        raise ValueError(f'{url!r} is not an http:// or https:// URL with a host')
    try:
        _ = parts.port                    # a non-numeric port raises here
    except ValueError as err:
        raise ValueError(f'{url!r}: {err}') from None
    return url


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        raise urllib.error.HTTPError(req.full_url, code, f'redirected to {newurl}, not '
                                     f'followed (give the final URL)', headers, fp)


def post(url, summary, auth=None, timeout=30):
    """POST ``summary``; returns None when sent, else why not, in one line."""
    opener = urllib.request.build_opener(_NoRedirect)
    request = urllib.request.Request(check_url(url), data=json.dumps(summary).encode(),
                                     method='POST',
                                     headers={'Content-Type': 'application/json'})
    if auth:
        request.add_unredirected_header('Authorization', auth)
    try:
        with opener.open(request, timeout=timeout) as response:
            response.read()
    except (OSError, ValueError, http.client.HTTPException) as err:
        return ' '.join(str(err).split()) or type(err).__name__
    return None
