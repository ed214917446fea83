#!/usr/bin/python3
"""A desktop notification daemon for the end-to-end tests.

It owns `org.freedesktop.Notifications` on the session bus of the test run (the private D-Bus session of
tests/with-keyring.sh) — the name every Linux desktop's notification server owns, and where the app's notification
plugin sends — and writes each notification it receives to stdout as one JSON line: {"app", "summary", "body",
"urgency"}. Its first line is {"ready": true}, once the name is owned. A test reads the lines to see what the app
announced. Debian's python3-dbus and python3-gi (Makefile's DEBIAN_PACKAGES) are all it needs.
"""
import json
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"


def say(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


class Notifications(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, PATH)
        self.last_id = 0

    @dbus.service.method(NAME, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app, replaces_id, icon, summary, body, actions, hints, timeout):
        self.last_id += 1
        urgency = hints.get("urgency")
        say({"app": str(app), "summary": str(summary), "body": str(body),
             "urgency": None if urgency is None else int(urgency)})
        return dbus.UInt32(self.last_id)

    @dbus.service.method(NAME, in_signature="", out_signature="as")
    def GetCapabilities(self):
        return ["body"]

    @dbus.service.method(NAME, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("pactwise-e2e", "pactwise", "1", "1.2")

    @dbus.service.method(NAME, in_signature="u", out_signature="")
    def CloseNotification(self, notification_id):
        pass


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    owned = bus.request_name(NAME, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
    if owned != dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER:
        sys.stderr.write(f"notification-daemon: {NAME} is owned by another process on this session bus\n")
        sys.exit(1)
    keep = Notifications(bus)  # noqa: F841 (exported while the loop runs)
    say({"ready": True})
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
