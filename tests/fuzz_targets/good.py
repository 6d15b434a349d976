"""The tiny server as it stands: the fuzzer must find nothing wrong with it."""

from _tiny import TinyServer, main

if __name__ == "__main__":
    main(TinyServer())
