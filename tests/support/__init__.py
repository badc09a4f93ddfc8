"""What only the tests use; what tests and benchmarks share (people, updates, the bot driver)
is in `infra.harness`.

    tests.support.corpus     hostile webhook inputs, and a game that checks nothing changed
    tests.support.games      games dealt by hand for the rule tests ('7♦ 7♣')
    tests.support.forum      people in a forum supergroup, each topic with its game
"""
