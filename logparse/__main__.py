"""`python -m logparse` runs the command line."""

from logparse.cli import main

if __name__ == "__main__":
    main()
