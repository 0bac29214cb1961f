"""The two pages ``gavel serve`` writes itself: the login form, and the page that runs the
workstation (textual-serve's terminal, served from this machine only: no web fonts or other
resources from elsewhere)."""

from __future__ import annotations

from html import escape

LOGIN = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Gavel: sign in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ background: #0c181f; color: #eee; font-family: sans-serif; display: flex;
       justify-content: center; align-items: center; height: 100vh; margin: 0; }}
form {{ background: #12232d; padding: 2em 3em; border-radius: 6px; }}
label {{ display: block; margin-top: 1em; }}
input {{ width: 22em; padding: .4em; margin-top: .3em; }}
button {{ margin-top: 1.5em; padding: .5em 2em; background: #5e0ba7; color: #fff;
          border: none; cursor: pointer; }}
.error {{ color: #f88; margin-top: 1em; }}
.hint {{ color: #aab; font-size: .85em; margin: .4em 0 0; max-width: 24em; }}
</style></head>
<body><form method="post" action="{action}">
<h2>Gavel</h2>
<label for="name">Reviewer</label><input id="name" name="name" autocomplete="username" autofocus>
<label for="token">Token or password</label>
<input id="token" name="token" type="password" autocomplete="current-password"
 aria-describedby="token-hint">
<p id="token-hint" class="hint">The token you were given, or your password if you were given
one instead.</p>
{error}<button id="sign-in" type="submit">Sign in</button>
</form></body></html>
"""

WORKSTATION = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Gavel: {name}</title>
<link rel="stylesheet" href="{static}css/xterm.css">
<script src="{static}js/textual.js"></script>
<style>
body {{ background: #0c181f; margin: 0; }}
.closed {{ display: none; color: #eee; font-family: sans-serif; padding: 2em; }}
body.-closed .closed {{ display: block; }}
</style></head>
<body>
<div class="closed">Session ended. <a href="{index}" style="color:#ac5af4">Start again</a></div>
<div id="terminal" class="textual-terminal" data-session-websocket-url="{websocket}"
     data-font-size="{font_size}"></div>
</body></html>
"""


def login_page(action: str, refused: bool = False) -> str:
    """The form; after a refusal it says only that (never whether the name exists)."""
    error = '<p class="error">Not accepted.</p>' if refused else ""
    return LOGIN.format(action=escape(action, quote=True), error=error)


def workstation_page(name: str, static: str, websocket: str, index: str, font_size: int) -> str:
    return WORKSTATION.format(
        name=escape(name),
        static=escape(static, quote=True),
        websocket=escape(websocket, quote=True),
        index=escape(index, quote=True),
        font_size=int(font_size),
    )
