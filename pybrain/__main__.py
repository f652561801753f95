from pybrain.entry import main

main()
