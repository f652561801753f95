from pybrain.cli import main

main()
