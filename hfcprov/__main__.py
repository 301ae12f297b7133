from hfcprov.cli import main

main()
