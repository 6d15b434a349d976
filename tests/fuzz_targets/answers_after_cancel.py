"""Broken: ignores notifications/cancelled and answers the cancelled request anyway."""

from _tiny import TinyServer, main


class AnswersAfterCancel(TinyServer):
    def on_cancel(self, number: int) -> None:
        pass  # the bug: the slow tool's answer still goes out


if __name__ == "__main__":
    main(AnswersAfterCancel())
