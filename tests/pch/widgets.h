// The precompiled header of the tests that link the user interface: the core tests' header plus QtWidgets,
// which is most of what a widget test's compiler reads.
#pragma once

#include "core.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>
